#!/bin/sh
# The kit's canary (axm_conformance._process.system._canary): a program no tool has reason to
# run. Only the kit's payloads name it; each run leaves its token where the kit looks.
printf '%s\n' "$*" >> /dev/shm/.axm-conformance-canary
