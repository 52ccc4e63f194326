"""One upgrade run: its directory and lock, its entries started, reused, shown and stopped."""
