"""Sessions: the store protocol, the in-memory store, leases, transcripts."""
