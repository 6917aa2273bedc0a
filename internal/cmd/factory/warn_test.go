package factory_test

import (
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
)

// TestImageClientWarnsOncePerRun: a warning reaches stderr once however
// many clients a command makes and however often each gives it.
func TestImageClientWarnsOncePerRun(t *testing.T) {
	t.Parallel()
	s, _, _, errOut := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	for range 2 {
		c, err := f.ImageClient(image.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := c.Options()
		o.Warn("no signature policy")
		o.Warn("no signature policy")
	}
	if n := strings.Count(errOut.String(), "no signature policy"); n != 1 {
		t.Errorf("warned %d times: %q", n, errOut.String())
	}
}
