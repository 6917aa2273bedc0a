package fbc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFromIndexMatchesUpstream: rendering each reference database gives
// upstream's render byte for byte.
func TestFromIndexMatchesUpstream(t *testing.T) {
	for _, dbPath := range referenceDBs(t) {
		name := strings.TrimSuffix(filepath.Base(dbPath), ".db")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(dbPath, ".db") + ".fbc.json")
			if err != nil {
				t.Fatal(err)
			}
			c, warns := renderDB(t, copyDB(t, dbPath), RenderOptions{})
			if len(warns) > 0 {
				t.Errorf("warnings: %v", warns)
			}
			var got bytes.Buffer
			if err := Write(&got, c, FormatJSON); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("render differs from upstream's: %s", firstDiff(got.Bytes(), want))
			}
		})
	}
}

// firstDiff describes where two outputs first differ.
func firstDiff(got, want []byte) string {
	gl := strings.Split(string(got), "\n")
	wl := strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			g, w := gl[i], wl[i]
			if len(g) > 200 {
				g = g[:200] + "..."
			}
			if len(w) > 200 {
				w = w[:200] + "..."
			}
			return "line " + itoa(i+1) + ":\n got: " + g + "\nwant: " + w
		}
	}
	return "lengths " + itoa(len(gl)) + " and " + itoa(len(wl)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }
