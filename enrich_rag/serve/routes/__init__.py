"""One router per concern, each a thin layer over the server's shared state and the project's door."""
