package compat

import (
	"fmt"
	"strings"
)

// TorchVariant is one CUDA build of a PyTorch release, e.g. cu124.
type TorchVariant struct {
	Name  string // wheel index name: "cu124"
	CUDA  string // CUDA release it is built with, major.minor: "12.4"
	Role  string // "stable" or "experimental" in PyTorch's release matrix
	Cudnn string // cuDNN bundled with the wheels: "9.1.0.70"
	NCCL  string // NCCL bundled, when known
	// OS is "linux" for a build made for Linux only; "" for every OS.
	OS string
	// PyPIDefault is "linux" for the build plain `pip install torch` gets
	// from PyPI on Linux; "" otherwise or when not recorded.
	PyPIDefault string
	Source      string
}

// TorchRelease is what cudaenv knows about one PyTorch release.
type TorchRelease struct {
	Version  string // "2.5.1"; only "2.14" when no patch release is known
	Minor    string // "2.5"
	Status   string // "release" or "candidate"
	Python   string // supported Python versions, as PyTorch states them
	Variants []TorchVariant
	// Torchvision and Torchaudio are the releases built for Version; empty when
	// no verified pairing is known (and torchaudio has none after 2.11).
	Torchvision string
	Torchaudio  string
	Note        string // caveats: patch release unknown, no torchaudio, ...
	Sources     []string
}

// IndexURL is PyTorch's wheel index for a variant ("cu124", "cpu").
func IndexURL(variant string) string {
	return "https://download.pytorch.org/whl/" + variant
}

// Torch looks up a PyTorch release. version may carry a local part
// ("2.5.1+cu124") or be a bare minor ("2.5", meaning its newest patch release).
// A patch release missing from the pairing table (or a pre-release such as
// "2.6.0a0") is still answered from its minor, without torchvision/torchaudio.
func Torch(version string) (TorchRelease, bool) {
	asked, parts := normalize(version, 0)
	if parts < 2 {
		return TorchRelease{}, false
	}
	minor := majorMinor(asked)
	var rel TorchRelease
	for _, r := range torchRows {
		if CompareVersions(r.torch, minor) != 0 {
			continue
		}
		rel.Minor, rel.Status, rel.Python = r.torch, r.status, r.python
		rel.Variants = append(rel.Variants, TorchVariant{
			Name:        r.variant,
			CUDA:        variantCUDA(r.variant),
			Role:        r.role,
			Cudnn:       r.cudnn,
			NCCL:        r.nccl,
			OS:          r.os,
			PyPIDefault: r.pypiDefault,
			Source:      r.source,
		})
		rel.Sources = appendUnique(rel.Sources, r.source)
	}
	if rel.Minor == "" {
		return TorchRelease{}, false
	}
	var dom *domainRow
	for i := range domainRows {
		d := &domainRows[i]
		if majorMinor(d.torch) != majorMinor(rel.Minor) {
			continue
		}
		if parts == 2 {
			if dom == nil || CompareVersions(d.torch, dom.torch) > 0 {
				dom = d
			}
		} else if CompareVersions(d.torch, asked) == 0 {
			dom = d
		}
	}
	switch {
	case dom != nil:
		rel.Version, rel.Torchvision, rel.Torchaudio = dom.torch, dom.torchvision, dom.torchaudio
		rel.Sources = appendUnique(rel.Sources, dom.source)
		if dom.torchaudio == "" {
			rel.Note = fmt.Sprintf("no torchaudio release is built for torch %s", dom.torch)
		}
	case parts == 2:
		rel.Version = rel.Minor
		rel.Note = fmt.Sprintf("no %s patch release with a verified torchvision/torchaudio pairing is known", rel.Minor)
	default:
		rel.Version = asked
		rel.Note = fmt.Sprintf("%s is not a release in the pairing table; torchvision/torchaudio unknown", version)
	}
	if rel.Status == "candidate" {
		rel.Note = joinNotes(fmt.Sprintf("%s is a release candidate", rel.Minor), rel.Note)
	}
	return rel, true
}

// Variant returns the release's build named name ("cu124").
func (t TorchRelease) Variant(name string) (TorchVariant, bool) {
	for _, v := range t.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return TorchVariant{}, false
}

// VariantFor returns the build that suits a CUDA toolkit: same major, the
// newest CUDA minor not above the toolkit's; if every build of that major is
// newer, the oldest of them. It reports false when no build has that major.
func (t TorchRelease) VariantFor(cuda string) (TorchVariant, bool) {
	major, mm := Major(cuda), majorMinor(cuda)
	var below, above *TorchVariant
	for i := range t.Variants {
		v := &t.Variants[i]
		if Major(v.CUDA) != major {
			continue
		}
		if CompareVersions(v.CUDA, mm) <= 0 {
			if below == nil || CompareVersions(v.CUDA, below.CUDA) > 0 {
				below = v
			}
		} else if above == nil || CompareVersions(v.CUDA, above.CUDA) < 0 {
			above = v
		}
	}
	switch {
	case below != nil:
		return *below, true
	case above != nil:
		return *above, true
	}
	return TorchVariant{}, false
}

// PipLine returns the pip command that installs torchVersion with its matching
// torchvision and torchaudio from the variant's index, e.g.
//
//	pip install torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 --index-url https://download.pytorch.org/whl/cu124
//
// variant "" means PyPI's default build (no index URL); "cpu" is accepted.
// Packages without a verified pairing are left out. It returns "" when the
// release or the variant is unknown, or the release has no patch version yet.
func PipLine(torchVersion, variant string) string {
	rel, ok := Torch(torchVersion)
	if !ok || len(versionParts(rel.Version)) < 3 || rel.Status == "candidate" {
		return ""
	}
	if variant != "" && variant != "cpu" {
		if _, ok := rel.Variant(variant); !ok {
			return ""
		}
	}
	b := strings.Builder{}
	b.WriteString("pip install torch==" + rel.Version)
	if rel.Torchvision != "" {
		b.WriteString(" torchvision==" + rel.Torchvision)
	}
	if rel.Torchaudio != "" {
		b.WriteString(" torchaudio==" + rel.Torchaudio)
	}
	if variant != "" {
		b.WriteString(" --index-url " + IndexURL(variant))
	}
	return b.String()
}

// TorchReleases returns every PyTorch minor release the tables know, oldest
// first, each answered as Torch(minor) would.
func TorchReleases() []TorchRelease {
	var minors []string
	for _, r := range torchRows {
		minors = appendUnique(minors, r.torch)
	}
	sortVersions(minors)
	out := make([]TorchRelease, 0, len(minors))
	for _, m := range minors {
		if rel, ok := Torch(m); ok {
			out = append(out, rel)
		}
	}
	return out
}

// variantCUDA turns "cu124" into "12.4" and "cu118" into "11.8".
func variantCUDA(variant string) string {
	d := strings.TrimPrefix(variant, "cu")
	if d == variant || len(d) < 3 {
		return ""
	}
	return d[:len(d)-1] + "." + d[len(d)-1:]
}

// VariantName turns a CUDA version ("12.4.1") into a wheel variant ("cu124").
func VariantName(cuda string) string {
	ps := versionParts(cuda)
	if len(ps) < 2 {
		return ""
	}
	return fmt.Sprintf("cu%d%d", ps[0], ps[1])
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// TorchMatrixRow is one PyTorch build and whether a driver runs it.
type TorchMatrixRow struct {
	Torch   string // "2.5.1" (or the minor, for a candidate)
	Variant TorchVariant
	Driver  DriverStatus // how the driver runs the variant's CUDA; DriverUnknown without a driver
	Need    string       // minimum driver for the variant's CUDA on the OS
}

// TorchMatrix lists every PyTorch release and CUDA build the tables know,
// newest first, each judged against driver on goos ("" driver: not judged).
func TorchMatrix(driver, goos string) []TorchMatrixRow {
	rels := TorchReleases()
	var out []TorchMatrixRow
	for i := len(rels) - 1; i >= 0; i-- {
		for _, v := range rels[i].Variants {
			row := TorchMatrixRow{Torch: rels[i].Version, Variant: v}
			if chk := CheckDriver(v.CUDA, driver, goos); driver != "" {
				row.Driver, row.Need = chk.Status, chk.Need
			} else if req, ok := DriverFor(v.CUDA); ok {
				row.Need = req.Min(goos)
			}
			out = append(out, row)
		}
	}
	return out
}
