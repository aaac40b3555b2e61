package main

import (
	"regexp"
	"testing"

	"github.com/cudaenv/cudaenv/internal/doctor"
)

// doctor --help lists the ids --json prints, for scripts that read them:
// every check doctor can report is named there.
func TestDoctorHelpNamesEveryCheckID(t *testing.T) {
	e := &env{goos: "linux"}
	var desc string
	for _, c := range newApp(e).Commands {
		if c.Name == "doctor" {
			desc = c.Description
		}
	}
	for _, id := range []string{doctor.IDToolkit, doctor.IDDriver, doctor.IDGPUArch, doctor.IDCudnn, doctor.IDHostCompiler,
		doctor.IDCMake, doctor.IDPath, doctor.IDTorch, doctor.IDEnv, doctor.IDGPU, doctor.IDKernels, doctor.IDLibraries,
		doctor.IDProducts, doctor.IDProductPins, "leftovers"} {
		if !regexp.MustCompile(`(^|[\s,(])` + regexp.QuoteMeta(id) + `($|[\s,:(])`).MatchString(desc) {
			t.Errorf("doctor --help does not name the check id %q", id)
		}
	}
}
