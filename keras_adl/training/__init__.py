"""Delivery: distribution across devices and machines, checkpoints, the resumable data stream,
tuning and export."""
