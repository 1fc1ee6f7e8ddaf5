"""The capture programs a receiver may run, and the rules their arguments are held to."""
