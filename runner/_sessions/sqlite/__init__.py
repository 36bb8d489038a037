"""SQLiteSessionStore: sessions in one SQLite file."""
