"""Core types, errors, hashing and seeding shared by every layer."""
