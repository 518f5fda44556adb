"""Storage behind one small interface (``pbem.store.base``); ``open_store`` picks the backend."""
