"""The daemon that joins the stages: the doors, the processor (in a process of its own under
`pbem serve`), the sender and the scheduler, connected by durable queues in the store."""
