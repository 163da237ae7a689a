"""Passes: IR -> IR transformations and the pass infrastructure (Sequential, PassContext, instruments)."""
