"""The command language players write: text lines and JSON turn files become ``Command`` objects;
the help texts describe it. Knows the command words, not the rules of any game."""
