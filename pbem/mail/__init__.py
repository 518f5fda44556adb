"""Mail in and mail out; knows nothing about any particular game."""
