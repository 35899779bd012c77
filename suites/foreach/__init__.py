"""The foreach suite: upstream's _foreach_* OpInfos at list lengths optimizers use."""
