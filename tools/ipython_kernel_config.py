# Installed by make into .venv/etc/ipython/: the kernel's own log at ERROR (ipykernel 7 warns at every start
# that its local TCP sockets are not encrypted, which only buries the output of make lab, make grade, ...).
c.IPKernelApp.log_level = "ERROR"
