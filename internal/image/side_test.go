package image

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSideFlags: a side's flags replace the global ones for that side
// only; contradicting flags of one side are refused.
func TestSideFlags(t *testing.T) {
	for _, c := range []struct {
		args               []string
		srcSkip, srcHTTP   bool
		destSkip, destHTTP bool
		wantErr            string
	}{
		{args: nil},
		{args: []string{"--skip-tls-verify"}, srcSkip: true, destSkip: true},
		{args: []string{"--use-http"}, srcHTTP: true, destHTTP: true},
		{args: []string{"--src-tls-verify=false", "--dest-use-http"}, srcSkip: true, destHTTP: true},
		{args: []string{"--skip-tls-verify", "--dest-use-http"}, srcSkip: true, destHTTP: true},
		{args: []string{"--skip-tls-verify", "--src-tls-verify"}, destSkip: true},
		{args: []string{"--use-http", "--dest-tls-verify"}, srcHTTP: true},
		{args: []string{"--use-http", "--src-use-http=false"}, destHTTP: true},
		{args: []string{"--dest-use-http", "--dest-tls-verify=false"}, wantErr: "--dest-tls-verify=false and --dest-use-http are mutually exclusive"},
		{args: []string{"--src-use-http", "--src-tls-verify=false"}, wantErr: "--src-tls-verify=false and --src-use-http"},
		{args: []string{"--src-tls-verify=maybe"}, wantErr: "want true or false"},
	} {
		var o Options
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		o.AddSideFlags(fs)
		err := fs.Parse(c.args)
		if err == nil {
			err = o.Validate()
		}
		if c.wantErr != "" {
			require.Error(t, err, "%v", c.args)
			assert.Contains(t, err.Error(), c.wantErr, "%v", c.args)
			continue
		}
		require.NoError(t, err, "%v", c.args)
		skip, http := o.side(false)
		assert.Equal(t, [2]bool{c.srcSkip, c.srcHTTP}, [2]bool{skip, http}, "%v: source", c.args)
		skip, http = o.side(true)
		assert.Equal(t, [2]bool{c.destSkip, c.destHTTP}, [2]bool{skip, http}, "%v: destination", c.args)
	}
}
