"""The typed data every layer shares: the report a session writes and the verdict judged from reports."""
