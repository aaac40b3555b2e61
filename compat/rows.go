package compat

// Row types of the generated tables in tables_gen.go. Field names match the
// column specs in internal/gen; every value is the TSV cell as written.

type driverRow struct {
	cuda, linuxMin, windowsMin, mvcLinux, mvcWindows, manifestDriver, note, source string
}

type torchRow struct {
	torch, variant, role, status, cudnn, nccl, python, os, pypiDefault, source string
}

type domainRow struct {
	torch, torchvision, torchaudio, source string
}

type cudnnRow struct {
	label, version string
	cudaMajors     []int
	date, source   string
}

type archRow struct {
	capability, arch, minCUDA, maxCUDA, source string
}

type torchPyPIRow struct {
	torch, platform, variant, cuda, cudnn, nccl, cusparselt, nvshmem, note, source string
}
