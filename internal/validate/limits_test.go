package validate

import (
	"errors"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
)

func TestTooLargeFileIsAFinding(t *testing.T) {
	loadErr := errors.Join(&bundle.FileTooLargeError{File: "manifests/huge.yaml", Size: 400 << 20})
	rep := Check("bundle", nil, loadErr, Options{})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	if f.File != "manifests/huge.yaml" || f.Severity != Error || f.Hint == "" {
		t.Errorf("finding %+v", f)
	}
}

func TestLinkOutIsAFinding(t *testing.T) {
	loadErr := errors.Join(&bundle.SymlinkError{File: "manifests/x.yaml", Target: "/etc/passwd"})
	rep := Check("bundle", nil, loadErr, Options{})
	if len(rep.Findings) != 1 || rep.Findings[0].File != "manifests/x.yaml" || rep.Findings[0].Hint == "" {
		t.Fatalf("findings %+v", rep.Findings)
	}
}
