"""The PTX memory consistency model (chapter 8 of the PTX ISA). Not built yet: see issue 4."""
