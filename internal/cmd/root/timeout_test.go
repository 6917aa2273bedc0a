package root_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// stallingRegistry accepts connections and never answers them.
func stallingRegistry(t *testing.T) string {
	t.Helper()
	addr, _ := countedStallingRegistry(t)
	return addr
}

// countedStallingRegistry is stallingRegistry that also counts the
// connections it accepted.
func countedStallingRegistry(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var held []net.Conn
	var accepted atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range held {
			_ = c.Close()
		}
	})
	return l.Addr().String(), &accepted
}

// --timeout bounds a whole run: a registry that never answers ends the
// run with 124 and one line, and nothing is written.
func TestTimeoutStopsAStalledRun(t *testing.T) {
	t.Parallel()
	addr := stallingRegistry(t)
	db := filepath.Join(t.TempDir(), "index.db")
	o := cmdtest.New(t)

	// The exit status and the message say the run stopped at its own
	// timeout: the registry's (30 s, retried) ends in another.
	r := o.Run("index", "add", "--use-http", "--timeout", "700ms", "--database", db, "--bundles", addr+"/bundle:v1")
	assert.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "timed out after 700ms (--timeout); nothing was written")
	assert.NotContains(t, r.ErrOut, "did not answer within", "the run stops at its timeout, not at the registry's")
	_, err := os.Stat(db)
	assert.True(t, os.IsNotExist(err), "no database is left behind")

	r = o.Run("bundle", "validate", "-o", "json", "--use-http", "--timeout", "500ms", addr+"/bundle:v1")
	assert.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"code": 124`, "a JSON run gets the error object")

	r = o.Run("bundle", "validate", "--timeout", "-1s", validBundle)
	assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "positive duration")

	r = o.Run("bundle", "validate", "--timeout", "1m", validBundle)
	assert.Equal(t, exit.OK, r.Code, "a run within its timeout is unaffected: %s", r.ErrOut)
}

// A registry that accepts and never answers: opm says which registry it
// is waiting for before --registry-timeout runs out, and with --retries 0
// the pull fails once it has, naming the registry.
func TestRegistryTimeoutAndRetriesZero(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, extra := range [][]string{nil, {"--use-http"}} {
		addr, accepted := countedStallingRegistry(t)
		args := append([]string{"render", "--registry-timeout", "2s", "--retries", "0", addr + "/bundle:v1"}, extra...)
		r := o.Run(args...)
		assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
		assert.Contains(t, r.ErrOut, "waiting for "+addr+" to answer")
		assert.Contains(t, r.ErrOut, "registry "+addr+" did not answer within 2s (raise --registry-timeout")
		// Counted, not timed: one attempt is one connection over TLS, two
		// with --use-http (the ping tries https and http at once); each
		// retry would add as many.
		want := int32(1 + len(extra))
		assert.LessOrEqual(t, accepted.Load(), want, "%v: --retries 0 means one attempt", args)
	}
}

// Four images of one silent registry fail for one cause, which is said
// once with the images: index add's error without --permissive, one
// warning with it, after bundle validate's report, and for the first
// image alpha render-template names.
func TestRegistryCauseSaidOnce(t *testing.T) {
	t.Parallel()
	addr := stallingRegistry(t)
	o := cmdtest.New(t)
	var refs []string
	for _, n := range []string{"a", "b", "c", "d"} {
		refs = append(refs, addr+"/"+n+":1")
	}
	cause := "registry " + addr + " did not answer within 1s"
	db := filepath.Join(t.TempDir(), "index.db")
	args := []string{"index", "add", "--database", db, "--bundles", strings.Join(refs, ","), "--registry-timeout", "1s", "--retries", "0"}

	r := o.Run(args...)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.ErrOut, cause), r.ErrOut)
	assert.Contains(t, r.ErrOut, "4 images ("+strings.Join(refs, ", ")+"): "+cause)

	r = o.Run(append(args, "--permissive")...)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.ErrOut, cause), r.ErrOut)
	assert.Contains(t, r.ErrOut, "warning: skipped 4 bundles ("+strings.Join(refs, ", ")+"): "+cause)
	assert.NotContains(t, r.ErrOut, "error:")

	// bundle validate: each image's report says it could not be pulled,
	// the cause follows once.
	r = o.Run(append([]string{"bundle", "validate", "--registry-timeout", "1s", "--retries", "0"}, refs...)...)
	assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.ErrOut, cause), r.ErrOut)
	assert.Equal(t, 4, strings.Count(r.ErrOut, "could not be pulled: the registry's reason follows the report"), r.ErrOut)
	assert.Contains(t, r.ErrOut, "4 images could not be opened\n  "+cause)
	assert.Contains(t, r.ErrOut, "(4 image(s): "+strings.Join(refs, ", ")+")")

	// alpha render-template: the first image the template names has the
	// reason, the others point to it.
	tmpl := filepath.Join(t.TempDir(), "basic.yaml")
	doc := "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: p\n"
	for _, ref := range refs {
		doc += "- schema: olm.bundle\n  image: " + ref + "\n"
	}
	require.NoError(t, os.WriteFile(tmpl, []byte(doc), 0o644))
	r = o.Run("alpha", "render-template", "basic", tmpl, "--registry-timeout", "1s", "--retries", "0")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Equal(t, 1, strings.Count(r.ErrOut, cause), r.ErrOut)
	assert.Contains(t, r.ErrOut, "bundle image "+refs[0]+": cannot be pulled: ")
	for _, ref := range refs[1:] {
		assert.Contains(t, r.ErrOut, "bundle image "+ref+": cannot be pulled, for the registry's reason given for "+refs[0]+"\n")
	}
}
