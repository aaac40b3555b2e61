package fetchtest

// synthetic manifests, shaped like NVIDIA's, served when the repository's
// testdata/nvidia/manifests is not found (or Options.Synthetic is set).
// Their sha256 and size values are placeholders, rewritten when served.
var synthetic = map[string]map[string]string{
	"cuda": {
		"12.4.1": `{
    "release_date": "2024-04-17",
    "release_label": "12.4.1",
    "release_product": "cuda",
    "cuda_cccl": {
        "name": "CXX Core Compute Libraries",
        "license": "CUDA Toolkit",
        "license_path": "cuda_cccl/LICENSE.txt",
        "version": "12.4.127",
        "linux-x86_64": {
            "relative_path": "cuda_cccl/linux-x86_64/cuda_cccl-linux-x86_64-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_cccl/linux-sbsa/cuda_cccl-linux-sbsa-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_cccl/windows-x86_64/cuda_cccl-windows-x86_64-12.4.127-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_cudart": {
        "name": "CUDA Runtime (cudart)",
        "license": "CUDA Toolkit",
        "license_path": "cuda_cudart/LICENSE.txt",
        "version": "12.4.127",
        "linux-x86_64": {
            "relative_path": "cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_cudart/linux-sbsa/cuda_cudart-linux-sbsa-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_cudart/windows-x86_64/cuda_cudart-windows-x86_64-12.4.127-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_nvcc": {
        "name": "CUDA NVCC",
        "license": "CUDA Toolkit",
        "license_path": "cuda_nvcc/LICENSE.txt",
        "version": "12.4.131",
        "linux-x86_64": {
            "relative_path": "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_nvcc/linux-sbsa/cuda_nvcc-linux-sbsa-12.4.131-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_nvcc/windows-x86_64/cuda_nvcc-windows-x86_64-12.4.131-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_nvrtc": {
        "name": "CUDA NVRTC",
        "license": "CUDA Toolkit",
        "license_path": "cuda_nvrtc/LICENSE.txt",
        "version": "12.4.127",
        "linux-x86_64": {
            "relative_path": "cuda_nvrtc/linux-x86_64/cuda_nvrtc-linux-x86_64-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_nvrtc/linux-sbsa/cuda_nvrtc-linux-sbsa-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_nvrtc/windows-x86_64/cuda_nvrtc-windows-x86_64-12.4.127-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "libcublas": {
        "name": "CUDA cuBLAS",
        "license": "CUDA Toolkit",
        "license_path": "libcublas/LICENSE.txt",
        "version": "12.4.5.8",
        "linux-x86_64": {
            "relative_path": "libcublas/linux-x86_64/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "libcublas/linux-sbsa/libcublas-linux-sbsa-12.4.5.8-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "libcublas/windows-x86_64/libcublas-windows-x86_64-12.4.5.8-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_documentation": {
        "name": "CUDA Documentation",
        "license": "CUDA Toolkit",
        "license_path": "cuda_documentation/LICENSE.txt",
        "version": "12.4.127",
        "linux-x86_64": {
            "relative_path": "cuda_documentation/linux-x86_64/cuda_documentation-linux-x86_64-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_documentation/linux-sbsa/cuda_documentation-linux-sbsa-12.4.127-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_documentation/windows-x86_64/cuda_documentation-windows-x86_64-12.4.127-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "nsight_compute": {
        "name": "Nsight Compute",
        "license": "NVIDIA SLA",
        "license_path": "nsight_compute/LICENSE.txt",
        "version": "2024.1.1.4",
        "linux-x86_64": {
            "relative_path": "nsight_compute/linux-x86_64/nsight_compute-linux-x86_64-2024.1.1.4-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "nsight_compute/linux-sbsa/nsight_compute-linux-sbsa-2024.1.1.4-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "nsight_compute/windows-x86_64/nsight_compute-windows-x86_64-2024.1.1.4-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "nvidia_driver": {
        "name": "NVIDIA Linux Driver",
        "license": "NVIDIA Driver",
        "license_path": "nvidia_driver/LICENSE.txt",
        "version": "550.54.15",
        "linux-x86_64": {
            "relative_path": "nvidia_driver/linux-x86_64/nvidia_driver-linux-x86_64-550.54.15-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "nvidia_driver/linux-sbsa/nvidia_driver-linux-sbsa-550.54.15-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    }
}`,
		"13.0.0": `{
    "release_date": "2025-08-04",
    "release_label": "13.0.0",
    "release_product": "cuda",
    "cuda_cccl": {
        "name": "CXX Core Compute Libraries",
        "license": "CUDA Toolkit",
        "license_path": "cuda_cccl/LICENSE.txt",
        "version": "13.0.50",
        "linux-x86_64": {
            "relative_path": "cuda_cccl/linux-x86_64/cuda_cccl-linux-x86_64-13.0.50-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_cccl/linux-sbsa/cuda_cccl-linux-sbsa-13.0.50-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_cccl/windows-x86_64/cuda_cccl-windows-x86_64-13.0.50-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_crt": {
        "name": "CUDA CRT",
        "license": "CUDA Toolkit",
        "license_path": "cuda_crt/LICENSE.txt",
        "version": "13.0.48",
        "linux-x86_64": {
            "relative_path": "cuda_crt/linux-x86_64/cuda_crt-linux-x86_64-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_crt/linux-sbsa/cuda_crt-linux-sbsa-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_crt/windows-x86_64/cuda_crt-windows-x86_64-13.0.48-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_cudart": {
        "name": "CUDA Runtime (cudart)",
        "license": "CUDA Toolkit",
        "license_path": "cuda_cudart/LICENSE.txt",
        "version": "13.0.48",
        "linux-x86_64": {
            "relative_path": "cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_cudart/linux-sbsa/cuda_cudart-linux-sbsa-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_cudart/windows-x86_64/cuda_cudart-windows-x86_64-13.0.48-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "cuda_nvcc": {
        "name": "CUDA NVCC",
        "license": "CUDA Toolkit",
        "license_path": "cuda_nvcc/LICENSE.txt",
        "version": "13.0.48",
        "linux-x86_64": {
            "relative_path": "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "cuda_nvcc/linux-sbsa/cuda_nvcc-linux-sbsa-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "cuda_nvcc/windows-x86_64/cuda_nvcc-windows-x86_64-13.0.48-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "libnvvm": {
        "name": "CUDA NVVM",
        "license": "CUDA Toolkit",
        "license_path": "libnvvm/LICENSE.txt",
        "version": "13.0.48",
        "linux-x86_64": {
            "relative_path": "libnvvm/linux-x86_64/libnvvm-linux-x86_64-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "libnvvm/linux-sbsa/libnvvm-linux-sbsa-13.0.48-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "libnvvm/windows-x86_64/libnvvm-windows-x86_64-13.0.48-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "libcublas": {
        "name": "CUDA cuBLAS",
        "license": "CUDA Toolkit",
        "license_path": "libcublas/LICENSE.txt",
        "version": "13.0.0.19",
        "linux-x86_64": {
            "relative_path": "libcublas/linux-x86_64/libcublas-linux-x86_64-13.0.0.19-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "libcublas/linux-sbsa/libcublas-linux-sbsa-13.0.0.19-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "windows-x86_64": {
            "relative_path": "libcublas/windows-x86_64/libcublas-windows-x86_64-13.0.0.19-archive.zip",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    },
    "nvidia_driver": {
        "name": "NVIDIA Linux Driver",
        "license": "NVIDIA Driver",
        "license_path": "nvidia_driver/LICENSE.txt",
        "version": "580.65.06",
        "linux-x86_64": {
            "relative_path": "nvidia_driver/linux-x86_64/nvidia_driver-linux-x86_64-580.65.06-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        },
        "linux-sbsa": {
            "relative_path": "nvidia_driver/linux-sbsa/nvidia_driver-linux-sbsa-580.65.06-archive.tar.xz",
            "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
            "md5": "00000000000000000000000000000000",
            "size": "1"
        }
    }
}`,
	},
	"cudnn": {
		"9.5.1": `{
    "release_date": "2024-10-25",
    "release_label": "9.5.1",
    "release_product": "cudnn",
    "cudnn": {
        "name": "NVIDIA CUDA Deep Neural Network library",
        "license": "cudnn",
        "license_path": "cudnn/LICENSE.txt",
        "version": "9.5.1.17",
        "cuda_variant": [
            "11",
            "12"
        ],
        "linux-x86_64": {
            "cuda11": {
                "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.5.1.17_cuda11-archive.tar.xz",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "md5": "00000000000000000000000000000000",
                "size": "1"
            },
            "cuda12": {
                "relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.5.1.17_cuda12-archive.tar.xz",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "md5": "00000000000000000000000000000000",
                "size": "1"
            }
        },
        "linux-sbsa": {
            "cuda11": {
                "relative_path": "cudnn/linux-sbsa/cudnn-linux-sbsa-9.5.1.17_cuda11-archive.tar.xz",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "md5": "00000000000000000000000000000000",
                "size": "1"
            },
            "cuda12": {
                "relative_path": "cudnn/linux-sbsa/cudnn-linux-sbsa-9.5.1.17_cuda12-archive.tar.xz",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "md5": "00000000000000000000000000000000",
                "size": "1"
            }
        },
        "windows-x86_64": {
            "cuda11": {
                "relative_path": "cudnn/windows-x86_64/cudnn-windows-x86_64-9.5.1.17_cuda11-archive.zip",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "md5": "00000000000000000000000000000000",
                "size": "1"
            },
            "cuda12": {
                "relative_path": "cudnn/windows-x86_64/cudnn-windows-x86_64-9.5.1.17_cuda12-archive.zip",
                "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
                "md5": "00000000000000000000000000000000",
                "size": "1"
            }
        }
    }
}`,
	},
}
