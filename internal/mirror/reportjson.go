package mirror

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes rep as JSON, indented by two spaces, without HTML
// escaping, an empty image list as []: the bytes output.WriteJSON writes
// for it, made one image record at a time. A report names every image of
// a catalog (thousands for a release catalog); marshalled whole it would
// be held in memory two or three times over at the end of a run, which a
// run's peak memory would then grow with. Every sink of a report (-o
// json, opm-mirror.json, the report kept at the destination) writes it
// this way, so that all hold the same bytes.
func (rep *Report) WriteJSON(w io.Writer) error {
	// Everything but the two lists of images, which are then written
	// in their places: images (never omitted) and earlier (omitted when
	// empty; it comes right before failed, which is never omitted).
	head := *rep
	head.Images, head.Earlier = nil, nil
	var hb, buf bytes.Buffer
	if err := encodeIndented(&hb, &head, ""); err != nil {
		return err
	}
	h := hb.Bytes()
	const imagesKey, failedKey = "\n  \"images\": null", "\n  \"failed\": "
	i := bytes.Index(h, []byte(imagesKey))
	j := bytes.Index(h, []byte(failedKey))
	if i < 0 || j < i {
		return fmt.Errorf("encode report: fields images and failed not where expected")
	}
	i += len(imagesKey) - len("null")
	bw := bufio.NewWriterSize(w, 32<<10)
	ew := &errWriter{w: bw}
	ew.write(h[:i])
	writeResults(ew, &buf, rep.Images)
	ew.write(h[i+len("null") : j])
	if len(rep.Earlier) > 0 {
		ew.write([]byte("\n  \"earlier\": "))
		writeResults(ew, &buf, rep.Earlier)
		ew.write([]byte(","))
	}
	ew.write(h[j:])
	if ew.err != nil {
		return ew.err
	}
	return bw.Flush()
}

// writeResults writes rs as a JSON array at the depth of a report's field,
// one element at a time through buf (which it reuses).
func writeResults(ew *errWriter, buf *bytes.Buffer, rs []Result) {
	if len(rs) == 0 {
		ew.write([]byte("[]"))
		return
	}
	ew.write([]byte("["))
	for k := range rs {
		buf.Reset()
		if err := encodeIndented(buf, &rs[k], "    "); err != nil {
			ew.fail(err)
			return
		}
		ew.write([]byte("\n    "))
		ew.write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if k < len(rs)-1 {
			ew.write([]byte(","))
		}
	}
	ew.write([]byte("\n  ]"))
}

func encodeIndented(buf *bytes.Buffer, v any, prefix string) error {
	enc := json.NewEncoder(buf)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	return nil
}

// errWriter keeps the first error of a series of writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *errWriter) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}
