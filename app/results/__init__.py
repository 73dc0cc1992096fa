"""Result collection: checks and storage."""
