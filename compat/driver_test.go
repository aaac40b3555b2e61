package compat

import "testing"

func TestDriverFor(t *testing.T) {
	tests := []struct {
		name, cuda                  string
		release, linux, windows     string
		exact, fromManifest, wantOK bool
		notePrefix                  string
	}{
		{name: "a release in the table is answered exactly", cuda: "12.4.1", release: "12.4.1", linux: "550.54.15", windows: "551.78", exact: true, wantOK: true},
		{name: "a missing patch release falls back to the nearest lower one of its minor", cuda: "12.4.2", release: "12.4.1", linux: "550.54.15", windows: "551.78", wantOK: true, notePrefix: "12.4.2 is not in the table; using 12.4.1"},
		{name: "a missing minor falls back to the nearest lower release of its major", cuda: "12.7.0", release: "12.6.3", linux: "560.35.05", windows: "561.17", wantOK: true, notePrefix: "12.7.0 is not in the table; using 12.6.3"},
		{name: "a bare minor means its GA release", cuda: "12.4", release: "12.4.0", linux: "550.54.14", windows: "551.61", exact: true, wantOK: true},
		{name: "a bare minor without a GA row means its first release", cuda: "11.0", release: "11.0.1", linux: "450.36.06", windows: "451.22", wantOK: true, notePrefix: "11.0 stands for every 11.0 release"},
		{name: "a release missing from the release notes takes the manifest's driver", cuda: "13.0.3", release: "13.0.3", linux: "580.126.20", exact: true, fromManifest: true, wantOK: true, notePrefix: "not in 13.2 Table 3"},
		{name: "a release the 13.3 notes list takes their driver", cuda: "13.3.0", release: "13.3.0", linux: "610.43.02", exact: true, wantOK: true, notePrefix: "\"CUDA 13.3 GA >=610.43.02\""},
		{name: "CUDA 13 has no Windows minimum", cuda: "13.0.0", release: "13.0.0", linux: "580.65.06", exact: true, wantOK: true, notePrefix: "Windows: N/A"},
		{name: "12.8.2, in no release notes' table, takes its manifest's driver and 12.8.1's on Windows", cuda: "12.8.2", release: "12.8.2", linux: "570.211.01", windows: "572.61", exact: true, fromManifest: true, wantOK: true, notePrefix: "not in Table 3; Linux minimum from the manifest"},
		{name: "12.9.2 takes its manifest's driver and 12.9.1's on Windows", cuda: "12.9.2", release: "12.9.2", linux: "575.57.08", windows: "576.57", exact: true, fromManifest: true, wantOK: true, notePrefix: "not in Table 3; Linux minimum from the manifest"},
		{name: "13.4.3 has its own row, with 13.4's developer driver", cuda: "13.4.3", release: "13.4.3", linux: "616.00", exact: true, wantOK: true, notePrefix: "no manifest stored; the rule of 13.4"},
		{name: "13.5.0 has its own row, with no minimum but the 580 floor", cuda: "13.5.0", release: "13.5.0", exact: true, wantOK: true, notePrefix: "no manifest stored and no minimum published"},
		{name: "an unknown major is not answered", cuda: "10.2", wantOK: false},
		{name: "garbage is not answered", cuda: "latest", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DriverFor(tt.cuda)
			if ok != tt.wantOK {
				t.Fatalf("DriverFor(%q) ok = %v, want %v", tt.cuda, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if got.Release != tt.release || got.Linux != tt.linux || got.Windows != tt.windows || got.Exact != tt.exact || got.LinuxFromManifest != tt.fromManifest {
				t.Errorf("DriverFor(%q) = %+v", tt.cuda, got)
			}
			if len(got.Note) < len(tt.notePrefix) || got.Note[:len(tt.notePrefix)] != tt.notePrefix {
				t.Errorf("Note = %q, want prefix %q", got.Note, tt.notePrefix)
			}
			if got.Source == "" {
				t.Error("Source is empty")
			}
		})
	}
}

func TestMinorCompatFloor(t *testing.T) {
	tests := []struct {
		major          int
		linux, windows string
	}{
		{11, "450.80.02", "452.39"},
		{12, "525.60.13", "527.41"},
		{13, "580", "580"},
	}
	for _, tt := range tests {
		got, ok := MinorCompatFloor(tt.major)
		if !ok || got.Linux != tt.linux || got.Windows != tt.windows {
			t.Errorf("MinorCompatFloor(%d) = %+v, %v", tt.major, got, ok)
		}
	}
	if _, ok := MinorCompatFloor(9); ok {
		t.Error("MinorCompatFloor(9) reported a floor")
	}
}

func TestCheckDriver(t *testing.T) {
	tests := []struct {
		name, cuda, driver, goos string
		want                     DriverStatus
	}{
		{"a driver at the minimum is enough", "12.4.1", "550.54.15", "linux", DriverOK},
		{"a newer driver branch is enough", "12.4.1", "570.86.10", "linux", DriverOK},
		{"an older 12.x driver runs 12.4 only through minor-version compatibility", "12.4.1", "535.104.05", "linux", DriverMinorCompat},
		{"a driver below the 12.x floor is too old", "12.4.1", "520.61.05", "linux", DriverTooOld},
		{"an 11.x driver cannot run 12.x at all", "12.4.1", "470.82.01", "linux", DriverTooOld},
		{"a 12.x driver is too old for CUDA 13", "13.0.0", "575.57.08", "linux", DriverTooOld},
		{"Windows is checked against the Windows minimum", "12.4.1", "551.78", "windows", DriverOK},
		{"Windows on CUDA 13 is checked against the 580 branch", "13.0.0", "581.15", "windows", DriverOK},
		{"13.5.0 runs on a 580 driver", "13.5.0", "580.65.06", "linux", DriverOK},
		{"13.5.0 does not run on a 12.x driver", "13.5.0", "575.57.08", "linux", DriverTooOld},
		{"Windows on 12.9.2 needs 12.9.1's driver", "12.9.2", "576.02", "windows", DriverMinorCompat},
		{"an unknown release cannot be judged", "9.2", "550.54.15", "linux", DriverUnknown},
		{"no driver cannot be judged", "12.4.1", "", "linux", DriverUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckDriver(tt.cuda, tt.driver, tt.goos); got.Status != tt.want {
				t.Errorf("CheckDriver(%q, %q, %q) = %v (%+v), want %v", tt.cuda, tt.driver, tt.goos, got.Status, got, tt.want)
			}
		})
	}
}

func TestMaxCUDAForDriver(t *testing.T) {
	tests := []struct{ driver, goos, want string }{
		{"550.54.15", "linux", "12.4.1"},
		{"535.104.05", "linux", "12.2.2"},
		{"470.82.01", "linux", "11.4.4"},
		{"610.43.02", "linux", "13.3.1"},
		{"551.78", "windows", "12.4.1"},
	}
	for _, tt := range tests {
		if got, _ := MaxCUDAForDriver(tt.driver, tt.goos); got != tt.want {
			t.Errorf("MaxCUDAForDriver(%q, %q) = %q, want %q", tt.driver, tt.goos, got, tt.want)
		}
	}
	if got, ok := MaxCUDAForDriver("390.12", "linux"); ok {
		t.Errorf("MaxCUDAForDriver(390.12) = %q, want none", got)
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"12.10", "12.9", 1},
		{"12.4", "12.4.0", 0},
		{"550.54.15", "550.54.14", 1},
		{"580", "580.65.06", -1},
		{"2.5.1+cu124", "2.5.1", 0},
		{"2.6.0a0", "2.6.0", 0},
		{"9.5.1.17", "9.5.1", 1},
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCUDAReleasesAreSortedAndUnique(t *testing.T) {
	rs := CUDAReleases()
	for i := 1; i < len(rs); i++ {
		if CompareVersions(rs[i-1], rs[i]) >= 0 {
			t.Fatalf("CUDAReleases not strictly increasing at %q, %q", rs[i-1], rs[i])
		}
	}
}

func TestNewestRelease(t *testing.T) {
	tests := []struct{ prefix, want string }{
		{"12.4", "12.4.1"}, {"12", "12.9.2"}, {"11.8", "11.8.0"}, {"12.4.0", "12.4.0"}, {"13", "13.5.0"},
	}
	for _, tt := range tests {
		if got, _ := NewestRelease(tt.prefix); got != tt.want {
			t.Errorf("NewestRelease(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
	if got, ok := NewestRelease("10.2"); ok {
		t.Errorf("NewestRelease(10.2) = %q", got)
	}
}
