package add

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/iostreams"
)

// TestSkippedReasonSaidOnce: a reason 30 bundles share (a package's) is
// one warning line listing some of them; a bundle with a reason of its
// own keeps its line; none of it is an error (--permissive went on).
func TestSkippedReasonSaidOnce(t *testing.T) {
	t.Parallel()
	pkg := errors.New("package etcd: the package has 2 deprecated bundles (opm index deprecatetruncate); opm does not add to such packages yet")
	res := &index.AddResult{}
	for i := range 30 {
		res.Skipped = append(res.Skipped, index.Skipped{Bundle: index.BundleRef{Name: fmt.Sprintf("etcd.v0.%d.0", i)}, Reason: pkg, Message: pkg.Error()})
	}
	own := errors.New("load bundle ./broken: yaml-syntax")
	res.Skipped = append(res.Skipped, index.Skipped{Bundle: index.BundleRef{Name: "./broken"}, Reason: own, Message: own.Error()})

	s, _, _, errOut := iostreams.Test()
	writeAddResult(factory.NewWithEnv(s, nil), "index.db", res)
	out := errOut.String()
	assert.Equal(t, 1, strings.Count(out, pkg.Error()), out)
	assert.Contains(t, out, "warning: skipped 30 bundles (etcd.v0.0.0, etcd.v0.1.0, ")
	assert.Contains(t, out, "etcd.v0.9.0 and 20 more): package etcd: ")
	assert.Contains(t, out, "warning: skipped ./broken: load bundle ./broken: yaml-syntax")
	assert.NotContains(t, out, "error:")
	assert.Equal(t, 2, strings.Count(out, "skipped "), out)
}
