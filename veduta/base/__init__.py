"""The base floor: asset kinds, the project and its asset index, errors, findings, file utilities
and argument checks. It imports nothing else of veduta."""
