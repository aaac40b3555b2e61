package fetchtest

import (
	"archive/tar"
	"fmt"
	"strconv"
	"strings"
)

// chainDepth is how many folders the escape chain climbs: enough to reach
// / from any test folder, few enough that resolving it stays under the
// kernel's 40 links per lookup.
const chainDepth = 16

// escapeChain is a chain of links that dangles while archives are unpacked
// and climbs out of the tree once cudaenv adds its own
// targets/x86_64-linux/lib64 → ../../lib link: lib/up1 → the tree's top,
// lib/upN → upN-1's parent. Each link reads, lexically, as a path inside
// targets/x86_64-linux. It returns the entries and the path (from the top
// of the tree) of the last link.
func escapeChain() ([]Entry, string) {
	const via = "../targets/x86_64-linux/lib64/"
	es := []Entry{{Name: "lib/up1", Type: tar.TypeSymlink, Link: via + ".."}}
	for i := 2; i <= chainDepth; i++ {
		es = append(es, Entry{Name: "lib/up" + strconv.Itoa(i), Type: tar.TypeSymlink, Link: via + "up" + strconv.Itoa(i-1) + "/.."})
	}
	return es, "targets/x86_64-linux/lib64/up" + strconv.Itoa(chainDepth)
}

// HostileKinds lists the attacks Hostile knows, for usage messages.
const HostileKinds = "escape-after-layout [PATH], receipt-link PATH, dangling, sparse, bomb"

// Hostile returns a Fault whose archives attack the installer (for
// tests; linux archives unless said):
//
//   - escape-after-layout [PATH]: escapeChain's links, which leave the tree
//     only once the layout links exist; with PATH (absolute), lib/escape
//     leads there through them.
//   - receipt-link PATH: the same chain, and a receipt.json link leading to
//     PATH: an installer that writes its receipt through it overwrites PATH.
//   - dangling: lib/libgone.so, a link to nothing.
//   - sparse: a sparse file of 1 GiB in an archive of a few hundred bytes.
//   - bomb: 16 MiB of zeros that compress to a few KiB (tar.xz and zip).
func Hostile(kind, arg string) (Fault, error) {
	chain, top := escapeChain()
	rel := strings.TrimLeft(arg, "/")
	switch kind {
	case "escape-after-layout":
		if arg != "" {
			chain = append(chain, Entry{Name: "lib/escape", Type: tar.TypeSymlink, Link: "../" + top + "/" + rel})
		}
		return Fault{Extra: chain}, nil
	case "receipt-link":
		if arg == "" {
			return Fault{}, fmt.Errorf("receipt-link needs the path the receipt should land on")
		}
		return Fault{Extra: append(chain, Entry{Name: "receipt.json", Type: tar.TypeSymlink, Link: top + "/" + rel})}, nil
	case "dangling":
		return Fault{Extra: []Entry{{Name: "lib/libgone.so", Type: tar.TypeSymlink, Link: "libgone.so.1"}}}, nil
	case "sparse":
		return Fault{Extra: []Entry{{Name: "lib/sparse", Type: TypePAXSparse, Size: 1 << 30}}}, nil
	case "bomb":
		return Fault{Extra: []Entry{{Name: "lib/zeros", Zeros: 16 << 20}}}, nil
	}
	return Fault{}, fmt.Errorf("unknown hostile archive %q (known: %s)", kind, HostileKinds)
}
