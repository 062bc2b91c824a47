"""Prints the NCCL and CUDA runtime that PyTorch loads, and the GPU count, for run_device.sh.

Output: one line "NCCL_PATH CUDART_PATH GPUS" (a path is "-" when torch's process has none),
read from /proc/self/maps once CUDA is initialised, so `llmbench probe comm` opens the very
libraries torch.distributed uses.
"""

import torch
import torch.distributed  # noqa: F401  (loads NCCL where torch keeps it in its own library)

torch.zeros(1, device="cuda")
paths = {}
with open("/proc/self/maps") as maps:
    for line in maps:
        p = line.split()[-1]
        for key in ("libnccl", "libcudart"):
            if "/" + key in p and key not in paths:
                paths[key] = p
print(paths.get("libnccl", "-"), paths.get("libcudart", "-"), torch.cuda.device_count())
