//! What a change to the queues moves (filled below).
