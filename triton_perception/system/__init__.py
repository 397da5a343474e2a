"""
The machine the package runs on: where its files are, child processes, file checksums.

Owns: paths (share directory, config files, the Fast DDS profile), processes (process trees,
node commands, dying with the parent), parent_death and checksums. Imports nothing of the
package. Public modules: paths, processes, parent_death, checksums.
"""
