#!/bin/sh
# opalctl unlock-all --askpass: the prompt text is the argument, the
# passphrase the standard output.
exec plymouth ask-for-password --prompt "$1"
