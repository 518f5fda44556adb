"""Reading mail: raw bytes to an ``IncomingMail`` (MIME, charsets, HTML to text, the reply above the
quote, tokens, JSON turn files, automatic mail). Pure functions of the bytes: no store, no game."""
