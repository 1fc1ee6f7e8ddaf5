"""Monitoring compliance: assigned sources, weekly-test and RMT alarms, the RMT relay deadline."""
