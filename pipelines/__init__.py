"""Loading, validating and running the pipeline catalog; the CLI; serving and evaluation."""
