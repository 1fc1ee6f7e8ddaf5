"""Audio monitoring: sources, levels and silence, audio alerts and the SAME monitor."""
