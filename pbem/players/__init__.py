"""What correspondence players take for granted about their own games and their own mailbox:
private and sealed notes on a game (``notes``), their only legal move played for them when they
ask for it (``automove``), and their own list of addresses they do not want to hear from
(``blocking``). Each module registers its commands and hooks when imported
(``pbem.processing.features``)."""
