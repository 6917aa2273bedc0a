// Package converttemplate is `opm alpha convert-template basic|substitutes`:
// a file-based catalog turned into the template that renders it, the start
// of a template repository.
package converttemplate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/fbcflags"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/basic"
	"github.com/opmkit/opm/internal/fbc/template/substitutes"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/yamldoc"
)

// Options are the flags and argument of a convert-template subcommand.
type Options struct {
	// Type is basic or substitutes.
	Type string
	// Input is a catalog file, a catalog directory, or "" / "-" for stdin.
	Input  string
	Output string
	// MaxInput bounds a catalog file or stdin read whole
	// (--max-input-size); <= 0: none. A directory is read blob by blob.
	MaxInput int64
}

// NewCmd is `opm alpha convert-template` with its subcommands.
func NewCmd(f *factory.Factory) *cobra.Command {
	return group.New("convert-template", "Convert a file-based catalog into a catalog template (basic or substitutes)",
		newTypeCmd(f, template.TypeBasic, nil),
		newTypeCmd(f, template.TypeSubstitutes, nil),
	)
}

// NewBasicCmd and NewSubstitutesCmd are the subcommands, for tests of
// their flags; runF, when not nil, runs instead of Run.
func NewBasicCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	return newTypeCmd(f, template.TypeBasic, runF)
}

// NewSubstitutesCmd is `opm alpha convert-template substitutes`.
func NewSubstitutesCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	return newTypeCmd(f, template.TypeSubstitutes, runF)
}

func newTypeCmd(f *factory.Factory, typ string, runF func(*Options) error) *cobra.Command {
	opts := &Options{Type: typ}
	long := map[string]string{
		template.TypeBasic: `Print the basic template (schema ` + template.SchemaBasic + `) of a file-based
catalog on stdout: every blob as it is, except that each olm.bundle blob
keeps only its schema and image (rendering the template pulls the image
again). Render it back with opm alpha render-template.`,
		template.TypeSubstitutes: `Print the substitutes template (schema ` + template.SchemaSubstitutes + `) of a
file-based catalog on stdout: every blob as it is, and an empty list of
substitutions to fill in ({name: BUNDLE-IMAGE, base: BUNDLE-NAME}).`,
	}[typ]
	cmd := &cobra.Command{
		Use:   typ + " [FILE|DIR|-]",
		Short: "Convert a file-based catalog into a " + typ + " template",
		Long: long + `

The catalog is a JSON or YAML file (upstream's input), a catalog directory,
or stdin (no argument, or -). Object keys come out sorted, as upstream
writes them.`,
		Example: "  opm render quay.io/me/index:1 > catalog.json && opm alpha convert-template " + typ + " catalog.json -o yaml > template.yaml\n" +
			"  opm migrate quay.io/me/index:1 catalog && opm alpha convert-template " + typ + " catalog/my-operator",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Input = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", string(fbc.FormatJSON), "template format: json or yaml")
	_ = cmd.Flags().SetAnnotation("output", output.DataFormatAnnotation, []string{"true"})
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{string(fbc.FormatJSON), string(fbc.FormatYAML)}, cobra.ShellCompDirectiveNoFileComp))
	fbcflags.AddInputSizeFlag(cmd.Flags(), &opts.MaxInput, "catalog file")
	return cmd
}

// Run converts the catalog and prints the template; nothing is printed
// when the catalog cannot be read whole.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	format, err := fbc.ParseFormat(opts.Output)
	if err != nil {
		return exit.Usagef("invalid --output %q%s: use json or yaml", opts.Output, f.From("output"))
	}
	blobs, err := readCatalog(ctx, f, opts.Input, opts.MaxInput)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	var data any
	switch opts.Type {
	case template.TypeBasic:
		bb := make([]basic.Blob, len(blobs))
		for i, b := range blobs {
			bb[i] = basic.Blob{Schema: b.schema, Value: b.value}
		}
		if data, err = basic.Convert(bb); err != nil {
			return exit.With(exit.Failed, err)
		}
	case template.TypeSubstitutes:
		vals := make([]any, len(blobs))
		for i, b := range blobs {
			vals[i] = b.value
		}
		data = substitutes.Convert(vals)
	default:
		return exit.Usagef("unknown template type %q", opts.Type)
	}
	out, err := Encode(data, format)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	_, err = f.IO.Out.Write(out)
	return err
}

// Encode writes a template as upstream's convert-template prints it: JSON
// indented by four spaces (HTML characters escaped, as encoding/json does
// by default), or YAML after a "---" line; a blank line ends either.
func Encode(v any, format fbc.Format) ([]byte, error) {
	j, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return nil, err
	}
	if format == fbc.FormatJSON {
		return append(j, '\n'), nil
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	return append(append([]byte("---\n"), y...), '\n'), nil
}

type blob struct {
	schema string
	value  any
}

// readCatalog reads the blobs of a catalog file, directory or stdin, in
// order, refusing a catalog that does not load (naming file and line).
// A file or stdin is read whole, stopping when ctx ends and refusing more
// than max bytes.
func readCatalog(ctx context.Context, f *factory.Factory, input string, max int64) ([]blob, error) {
	var (
		data   []byte
		source string
		err    error
	)
	switch input {
	case "", "-":
		source = "stdin"
		if data, err = iostreams.ReadAll(ctx, f.IO.In, max); err != nil {
			return nil, fmt.Errorf("read the catalog from stdin: %w", iostreams.FlagHint(err))
		}
	default:
		source = input
		st, err := os.Stat(input)
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		if st.IsDir() {
			c, err := fbc.LoadDir(input)
			if err != nil {
				return nil, fmt.Errorf("load catalog %s: %w\n(`opm validate %s` lists every problem)", input, err, input)
			}
			// A directory's blobs come in the order opm render prints them.
			var buf bytes.Buffer
			if err := fbc.Write(&buf, c, fbc.FormatJSON); err != nil {
				return nil, err
			}
			data, source = buf.Bytes(), input+" (rendered).json"
		} else if data, err = iostreams.ReadFile(ctx, input, max); err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", input, err)
		}
	}
	// Like upstream, tell JSON from YAML by the content, not the name.
	name := source
	isJSON := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf"), []byte("{"))
	switch {
	case isJSON && !strings.HasSuffix(strings.ToLower(name), ".json"):
		name += ".json"
	case !isJSON && strings.HasSuffix(strings.ToLower(name), ".json"):
		name += ".yaml"
	}
	fix := func(file string) string {
		if file == name {
			return source
		}
		return file
	}
	if err := (&fbc.Catalog{}).LoadFile(name, data); err != nil {
		var msgs []string
		for _, e := range fbc.LoadErrors(err) {
			var le *fbc.LoadError
			if errors.As(e, &le) {
				c := *le
				c.File = fix(c.File)
				e = &c
			}
			msgs = append(msgs, e.Error())
		}
		return nil, fmt.Errorf("%s is not a file-based catalog:\n  %s", source, strings.Join(msgs, "\n  "))
	}
	docs, err := yamldoc.Decode(name, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	out := make([]blob, 0, len(docs))
	for _, d := range docs {
		// Numbers as upstream holds them (float64), keys sorted on output.
		raw, err := template.Marshal(d.Value)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", source, d.Line, err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", source, d.Line, err)
		}
		m, _ := v.(map[string]any)
		s, _ := m["schema"].(string)
		out = append(out, blob{schema: s, value: v})
	}
	return out, nil
}

// readFile reads a catalog file whole under ctx and max (a FIFO may never end).
