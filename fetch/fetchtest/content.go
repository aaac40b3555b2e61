package fetchtest

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ulikunitz/xz"
)

// Entry is one member of a generated archive.
type Entry struct {
	// Name is relative to the archive's top folder
	// (cuda_nvcc-linux-x86_64-12.4.131-archive/), unless Raw is set.
	Name string
	Raw  bool
	// Type is a tar type flag: tar.TypeReg (the zero value works too),
	// tar.TypeDir, tar.TypeSymlink, tar.TypeLink, tar.TypeFifo, tar.TypeChar;
	// or, for a sparse file of Size bytes whose only data is its last byte,
	// tar.TypeGNUSparse (old GNU format) or TypePAXSparse (PAX 1.0 format).
	// Zip archives support files, directories and symlinks.
	Type byte
	Mode int64  // permission bits; 0 means 0o644 (0o755 for directories)
	Body string // file contents
	Link string // symlink or hard link target, verbatim
	// Size, when > 0, makes the file Size bytes of deterministic,
	// moderately compressible data (see Fill); Body is ignored.
	Size int64
	// Zeros, when > 0, makes the file that many zero bytes, which
	// compress a thousandfold: an archive bomb.
	Zeros int64
}

// TypePAXSparse is the Entry.Type of a sparse file in the PAX 1.0 format
// (a regular file whose PAX header carries GNU.sparse.* records).
const TypePAXSparse byte = 's'

// TopFolder is the folder NVIDIA's archives put everything in: the file
// name without its extension.
func TopFolder(relativePath string) string {
	base := path.Base(relativePath)
	for _, ext := range []string{".tar.xz", ".tar.gz", ".tgz", ".tar", ".zip"} {
		if s, ok := strings.CutSuffix(base, ext); ok {
			return s
		}
	}
	return base
}

// Contents returns the entries cudaenv's test mirror puts in a
// component's archive: NVIDIA's layout in miniature (bin/nvcc that prints
// its version, lib/libcudart.so.12 with its symlinks, include/cuda_runtime.h,
// LICENSE, ...).
func Contents(component, version, platform, variant string) []Entry {
	win := strings.HasPrefix(platform, "windows")
	parts := append(strings.Split(version, "."), "0")
	major, minor := parts[0], parts[1]
	majorN, _ := strconv.Atoi(major)
	exe := func(name, body string) Entry {
		if win {
			return Entry{Name: "bin/" + name + ".exe", Body: "MZ fake windows executable\n" + body}
		}
		return Entry{Name: "bin/" + name, Mode: 0o755, Body: "#!/bin/sh\n" + body}
	}
	sharedLib := func(name, ver string) []Entry {
		if win {
			return []Entry{
				{Name: "bin/" + name + "64_" + strings.Split(ver, ".")[0] + ".dll", Body: "MZ fake dll " + name + " " + ver + "\n"},
				{Name: "lib/x64/" + name + ".lib", Body: "fake import library " + name + "\n"},
			}
		}
		maj := strings.Split(ver, ".")[0]
		return []Entry{
			{Name: "lib/" + name + ".so." + ver, Mode: 0o755, Body: "\x7fELF fake " + name + " " + ver + "\n"},
			{Name: "lib/" + name + ".so." + maj, Type: tar.TypeSymlink, Link: name + ".so." + ver},
			{Name: "lib/" + name + ".so", Type: tar.TypeSymlink, Link: name + ".so." + maj},
			{Name: "lib/" + name + "_static.a", Body: "!<arch>\nfake static " + name + "\n"},
		}
	}
	es := []Entry{{Name: "LICENSE", Body: fmt.Sprintf("License of %s %s (test mirror)\n", component, version)}}
	switch component {
	case "cuda_nvcc":
		script := fmt.Sprintf("echo 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Copyright (c) 2005-2024 NVIDIA Corporation'\necho 'Cuda compilation tools, release %s.%s, V%s'\necho 'Build cuda_%s.%s.r%s.%s/compiler.0_0'\n", major, minor, version, major, minor, major, minor)
		es = append(es,
			exe("nvcc", script),
			exe("ptxas", fmt.Sprintf("echo 'ptxas: NVIDIA (R) Ptx optimizing assembler'\necho 'Cuda compilation tools, release %s.%s, V%s'\n", major, minor, version)),
			Entry{Name: "bin/nvcc.profile", Body: "TOP              = $(_HERE_)/..\nINCLUDES        +=  \"-I$(TOP)/$(_TARGET_DIR_)/include\" $(_SPACE_)\nLIBRARIES        =+ $(_SPACE_) \"-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)\"\n"},
			Entry{Name: "include/fatbinary_section.h", Body: "/* fatbinary_section.h */\n"},
		)
		if majorN < 13 {
			es = append(es,
				Entry{Name: "include/crt/host_config.h", Body: "/* crt/host_config.h from cuda_nvcc */\n"},
				exe("../nvvm/bin/cicc", "echo cicc\n"),
				Entry{Name: "nvvm/libdevice/libdevice.10.bc", Body: "BC fake libdevice\n"},
			)
		}
	case "cuda_cudart":
		es = append(es,
			Entry{Name: "include/cuda_runtime.h", Body: fmt.Sprintf("#define CUDART_VERSION %d\n", majorN*1000+atoi(minor)*10)},
			Entry{Name: "include/cuda_runtime_api.h", Body: "/* cuda_runtime_api.h */\n"},
		)
		es = append(es, sharedLib("libcudart", version)...)
		if !win {
			es = append(es, Entry{Name: "lib/stubs/libcuda.so", Body: "\x7fELF fake driver stub\n"})
		}
	case "cuda_cccl", "cccl":
		inc := "include/"
		if majorN >= 13 {
			inc = "include/cccl/"
		}
		es = append(es,
			Entry{Name: inc + "cuda/std/version", Body: "// libcu++ version\n"},
			Entry{Name: inc + "thrust/version.h", Body: "#define THRUST_VERSION 200000\n"},
			Entry{Name: inc + "cub/version.cuh", Body: "#define CUB_VERSION 200000\n"},
		)
	case "cuda_crt":
		es = append(es, Entry{Name: "include/crt/host_config.h", Body: "/* crt/host_config.h from cuda_crt */\n"})
	case "libnvvm":
		es = append(es,
			exe("../nvvm/bin/cicc", "echo cicc\n"),
			Entry{Name: "nvvm/libdevice/libdevice.10.bc", Body: "BC fake libdevice\n"},
			Entry{Name: "nvvm/include/nvvm.h", Body: "/* nvvm.h */\n"},
		)
	case "cudnn":
		es = append(es,
			Entry{Name: "include/cudnn.h", Body: "#include \"cudnn_version.h\"\n"},
			Entry{Name: "include/cudnn_version.h", Body: cudnnVersionHeader(version)},
		)
		es = append(es, sharedLib("libcudnn", version)...)
	default:
		if strings.HasPrefix(component, "lib") {
			es = append(es, sharedLib(component, version)...)
			es = append(es, Entry{Name: "include/" + strings.TrimPrefix(component, "lib") + ".h", Body: "/* " + component + " */\n"})
		} else {
			es = append(es, Entry{Name: "include/" + component + ".h", Body: "/* " + component + " " + version + " */\n"})
		}
	}
	if variant != "" {
		es = append(es, Entry{Name: "share/" + component + "/variant", Body: variant + "\n"})
	}
	return es
}

func cudnnVersionHeader(version string) string {
	p := append(strings.Split(version, "."), "0", "0", "0")
	return fmt.Sprintf("#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n", p[0], p[1], p[2])
}

// buildArchive writes entries under top into a .tar.xz or .zip (by the
// name of relativePath).
func buildArchive(relativePath string, entries []Entry, seed uint64) ([]byte, error) {
	top := TopFolder(relativePath)
	var buf bytes.Buffer
	if strings.HasSuffix(relativePath, ".zip") {
		if err := writeZip(&buf, top, entries, seed); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	xw, err := xz.WriterConfig{DictCap: 1 << 16, BufSize: 1 << 12}.NewWriter(&buf)
	if err != nil {
		return nil, err
	}
	if err := WriteTar(xw, top, entries, seed); err != nil {
		return nil, err
	}
	if err := xw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var epoch = time.Date(2024, 4, 3, 0, 0, 0, 0, time.UTC)

func entryName(top string, e Entry) string {
	if e.Raw {
		return e.Name
	}
	return path.Join(top, e.Name)
}

// WriteTar writes entries as an uncompressed tar stream with NVIDIA's
// layout: a directory entry for top, then each entry under it (with its
// parent directories). seed varies the data of entries with a Size.
func WriteTar(w io.Writer, top string, entries []Entry, seed uint64) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	var mkdirs func(d string) error
	mkdirs = func(d string) error {
		if d == "." || d == "/" || d == "" || dirs[d] || strings.HasPrefix(d, "..") || strings.Contains(d, "/..") {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
	}
	if err := mkdirs(top); err != nil {
		return err
	}
	for i, e := range entries {
		name := entryName(top, e)
		if !e.Raw {
			if err := mkdirs(path.Dir(name)); err != nil {
				return err
			}
		}
		if e.Type == tar.TypeGNUSparse || e.Type == TypePAXSparse {
			if err := tw.Flush(); err != nil {
				return err
			}
			if _, err := w.Write(sparseEntry(name, e.Type, e.Size)); err != nil {
				return err
			}
			continue
		}
		h := &tar.Header{Typeflag: e.Type, Name: name, Mode: e.Mode, ModTime: epoch, Linkname: e.Link, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		switch h.Typeflag {
		case tar.TypeReg:
			switch {
			case e.Zeros > 0:
				h.Size = e.Zeros
			case e.Size > 0:
				h.Size = e.Size
			default:
				h.Size = int64(len(e.Body))
			}
		case tar.TypeDir:
			h.Name = strings.TrimSuffix(name, "/") + "/"
			dirs[strings.TrimSuffix(name, "/")] = true
		case tar.TypeSymlink:
			h.Mode = 0o777
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			var err error
			switch {
			case e.Zeros > 0:
				err = zeros(tw, e.Zeros)
			case e.Size > 0:
				err = Fill(tw, e.Size, seed*1000+uint64(i)+1)
			default:
				_, err = io.WriteString(tw, e.Body)
			}
			if err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func writeZip(w io.Writer, top string, entries []Entry, seed uint64) error {
	zw := zip.NewWriter(w)
	if _, err := zw.CreateHeader(&zip.FileHeader{Name: top + "/", Modified: epoch}); err != nil {
		return err
	}
	for i, e := range entries {
		name := entryName(top, e)
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: epoch}
		mode := e.Mode
		if mode == 0 {
			mode = 0o644
		}
		switch e.Type {
		case tar.TypeDir:
			h.Name = strings.TrimSuffix(name, "/") + "/"
			h.SetMode(fs.ModeDir | 0o755)
		case tar.TypeSymlink:
			h.SetMode(fs.ModeSymlink | 0o777)
		case 0, tar.TypeReg:
			h.SetMode(fs.FileMode(mode) & 0o777)
		default:
			continue // zip has no hard links or special files
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		switch {
		case e.Type == tar.TypeSymlink:
			_, err = io.WriteString(fw, e.Link)
		case e.Zeros > 0:
			err = zeros(fw, e.Zeros)
		case e.Size > 0:
			err = Fill(fw, e.Size, seed*1000+uint64(i)+1)
		default:
			_, err = io.WriteString(fw, e.Body)
		}
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// Fill writes n bytes of deterministic data that compresses roughly like
// shared libraries do: a mix of random runs, small-alphabet runs (code)
// and repeated symbol names.
func Fill(w io.Writer, n int64, seed uint64) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	x := seed*0x9E3779B97F4A7C15 | 1
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	words := []string{"cudaMalloc", "__global__", "_ZN4cuda3std3__45tupleIJ", "libcublasLt.so.12", "GLIBC_2.17\x00", "\x00\x00\x00\x00\x00\x00\x00\x00", "sm_90a\x00", ".nv.constant0.", "cutlass::gemm::kernel::", "\xff\xff\xff\xff"}
	buf := make([]byte, 4096)
	for n > 0 {
		switch k := next() % 10; {
		case k < 3: // incompressible
			for i := 0; i < len(buf); i += 8 {
				v := next()
				for j := 0; j < 8; j++ {
					buf[i+j] = byte(v >> (8 * j))
				}
			}
		case k < 6: // machine-code-like: small alphabet
			for i := 0; i < len(buf); i += 4 {
				v := next()
				for j := 0; j < 4; j++ {
					buf[i+j] = byte(v>>(16*j))%16 + byte(v>>(16*j+8))%4*32
				}
			}
		default: // symbol tables, padding
			for i := 0; i < len(buf); {
				i += copy(buf[i:], words[next()%uint64(len(words))])
			}
		}
		m := int64(len(buf))
		if n < m {
			m = n
		}
		if _, err := bw.Write(buf[:m]); err != nil {
			return err
		}
		n -= m
	}
	return bw.Flush()
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func zeros(w io.Writer, n int64) error {
	_, err := io.CopyN(w, zeroReader{}, n)
	return err
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// SparseMember is a sparse file as raw tar blocks (see sparseEntry), for
// tests of other tar readers that must refuse one: write it after a
// tar.Writer's Flush, or splice it into a tar before its end blocks.
func SparseMember(name string, typ byte, realSize int64) []byte {
	return sparseEntry(name, typ, realSize)
}

// sparseEntry encodes, by hand (archive/tar cannot write sparse files), a
// sparse file of realSize bytes whose only stored data is its last byte,
// 'x': the archive stays tiny whatever realSize is.
func sparseEntry(name string, typ byte, realSize int64) []byte {
	var out bytes.Buffer
	if typ == tar.TypeGNUSparse {
		h := tarBlock(name, tar.TypeGNUSparse, 1)
		copy(h[257:], "ustar  \x00") // GNU magic and version
		copy(h[386:], octal(realSize-1, 12))
		copy(h[398:], octal(1, 12))
		copy(h[483:], octal(realSize, 12))
		checksum(h)
		out.Write(h)
		out.Write(padBlock([]byte("x")))
		return out.Bytes()
	}
	var recs strings.Builder
	for _, kv := range [][2]string{
		{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"},
		{"GNU.sparse.name", name}, {"GNU.sparse.realsize", strconv.FormatInt(realSize, 10)},
	} {
		rec := " " + kv[0] + "=" + kv[1] + "\n"
		n := len(rec)
		for len(strconv.Itoa(n))+len(rec) != n {
			n = len(strconv.Itoa(n)) + len(rec)
		}
		recs.WriteString(strconv.Itoa(n) + rec)
	}
	out.Write(tarBlock(path.Join(path.Dir(name), "PaxHeaders", path.Base(name)), tar.TypeXHeader, int64(recs.Len())))
	out.Write(padBlock([]byte(recs.String())))
	sparseMap := padBlock([]byte("1\n" + strconv.FormatInt(realSize-1, 10) + "\n1\n"))
	out.Write(tarBlock(path.Join(path.Dir(name), "GNUSparseFile.0", path.Base(name)), tar.TypeReg, int64(len(sparseMap))+1))
	out.Write(sparseMap)
	out.Write(padBlock([]byte("x")))
	return out.Bytes()
}

// tarBlock is a ustar header block with its checksum.
func tarBlock(name string, typ byte, size int64) []byte {
	h := make([]byte, 512)
	copy(h[0:100], name)
	copy(h[100:], octal(0o644, 8))
	copy(h[108:], octal(0, 8))
	copy(h[116:], octal(0, 8))
	copy(h[124:], octal(size, 12))
	copy(h[136:], octal(epoch.Unix(), 12))
	h[156] = typ
	copy(h[257:], "ustar\x0000")
	checksum(h)
	return h
}

func checksum(h []byte) {
	copy(h[148:156], "        ")
	sum := 0
	for _, b := range h {
		sum += int(b)
	}
	copy(h[148:], octal(int64(sum), 7))
	h[155] = ' '
}

func octal(n int64, width int) string {
	s := strconv.FormatInt(n, 8)
	for len(s) < width-1 {
		s = "0" + s
	}
	return s + "\x00"
}

func padBlock(b []byte) []byte {
	return append(b, make([]byte, (512-len(b)%512)%512)...)
}
