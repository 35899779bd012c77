"""`python -m neuron_conform ...` is `neuron-conform ...`."""

from neuron_conform import main

main()
