"""Delivery: distribution, tuning and export."""
