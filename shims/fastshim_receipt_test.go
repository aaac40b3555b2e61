package shims

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cudaenv/cudaenv/store"
)

// The fields the fast shim takes in a link receipt (link_target) are
// store.Receipt's, of the JSON types it reads them as: strings, int64
// counts, the time. A field that changes type or goes away in Go fails
// here rather than being read differently by C.
func TestFastShimLinkReceiptFieldsAreReceipts(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("fastshim", "fastshim.c"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)static const char \*const names\[FIELDS\] = \{(.*?)\};`).FindSubmatch(src)
	if m == nil {
		t.Fatal("fastshim.c has no link_target field names")
	}
	var cNames []string
	for _, q := range regexp.MustCompile(`"([a-z_]+)"`).FindAllSubmatch(m[1], -1) {
		cNames = append(cNames, string(q[1]))
	}
	goFields := map[string]reflect.Type{}
	rt := reflect.TypeOf(store.Receipt{})
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		goFields[name] = rt.Field(i).Type
	}
	want := map[string]reflect.Kind{"kind": reflect.String, "version": reflect.String, "source": reflect.String, "target": reflect.String,
		"cuda_major": reflect.Int, "installed_bytes": reflect.Int64, "installed": reflect.Struct}
	if len(cNames) != len(want) {
		t.Errorf("fastshim.c reads the link receipt fields %q; this test knows %d", cNames, len(want))
	}
	for _, n := range cNames {
		ty, ok := goFields[n]
		switch {
		case !ok:
			t.Errorf("fastshim.c reads %q, which store.Receipt does not have", n)
		case want[n] == reflect.Struct && ty != reflect.TypeOf(time.Time{}):
			t.Errorf("store.Receipt's %q is a %v; fastshim.c reads it as a time", n, ty)
		case ty.Kind() != want[n]:
			t.Errorf("store.Receipt's %q is a %v; fastshim.c reads it as a %v", n, ty, want[n])
		}
	}
}
