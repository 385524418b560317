"""Corpus program catalogues, one module per area. Each module's programs() returns a list
of corpus_lib.Program; generate_corpus.py lowers and serializes them."""
