// Package output holds the -o flag that commands share, its JSON writer
// and the JSON error object a failed -o json run writes.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/iostreams"
)

// Formats of -o.
const (
	Text  = "text"
	JSON  = "json"
	SARIF = "sarif"
)

// FlagName is the name of the -o flag.
const FlagName = "output"

// formatsAnnotation holds a command's -o formats on the flag, so that
// Check and the completion agree with AddFlag.
const formatsAnnotation = "opm_output_formats"

// AddFlag adds -o/--output to cmd, into p, with its shell completion.
// formats are what the command writes; text and json when none are given.
func AddFlag(cmd *cobra.Command, p *string, formats ...string) {
	addFlag(cmd, p, "o", formats)
}

// AddLongFlag is AddFlag without the -o shorthand, for commands where -o
// means something else (upstream's index rm --operators).
func AddLongFlag(cmd *cobra.Command, p *string, formats ...string) {
	addFlag(cmd, p, "", formats)
}

func addFlag(cmd *cobra.Command, p *string, short string, formats []string) {
	if len(formats) == 0 {
		formats = []string{Text, JSON}
	}
	cmd.Flags().StringVarP(p, FlagName, short, Text, fmt.Sprintf("output format: %s (%s to stdout)", orList(formats), machineGo(formats)))
	_ = cmd.Flags().SetAnnotation(FlagName, formatsAnnotation, formats)
	_ = cmd.RegisterFlagCompletionFunc(FlagName, cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// machineGo says which formats are written to stdout.
func machineGo(formats []string) string {
	for _, f := range formats {
		if f == SARIF {
			return "json and sarif go"
		}
	}
	return "json goes"
}

func orList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Check validates an -o value; from says where it came from (see
// config.Config.From). The accepted values are text and json.
func Check(v, from string) error { return CheckOneOf(v, from, Text, JSON) }

// CheckOneOf validates an -o value against formats.
func CheckOneOf(v, from string, formats ...string) error {
	for _, f := range formats {
		if v == f {
			return nil
		}
	}
	return exit.Usagef("invalid --output %q%s: use %s", v, from, orList(formats))
}

// DataFormatAnnotation marks an -o flag that names the format of data the
// command writes (opm render's catalog), so that failures are not written
// to stdout as a JSON error object among that data.
const DataFormatAnnotation = "opm_data_format"

// Of is the -o report format cmd was run with ("" when it has no -o flag,
// or when its -o is a data format).
func Of(cmd *cobra.Command) string {
	if cmd == nil {
		return ""
	}
	fl := cmd.Flags().Lookup(FlagName)
	if fl == nil {
		return ""
	}
	if _, data := fl.Annotations[DataFormatAnnotation]; data {
		// The format of data the command writes (a catalog), not of a
		// report: there is no JSON report to put a failure in.
		return ""
	}
	return fl.Value.String()
}

// WriteJSON writes v indented, without HTML escaping. Every nil slice or
// map in v is written as [] or {}, never null, so that scripts can iterate
// a list without checking for null first. A value that writes itself
// (a JSONWriter: a report too large to marshal whole) does so; it keeps to
// the same rules.
func WriteJSON(w io.Writer, v any) error {
	if jw, ok := v.(JSONWriter); ok {
		return jw.WriteJSON(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(nonNil(reflect.ValueOf(v)).Interface())
}

// JSONWriter is a value that writes its JSON itself, as WriteJSON would
// write it, a part at a time.
type JSONWriter interface {
	WriteJSON(w io.Writer) error
}

// ErrorObject is what a failed -o json run writes to stdout.
type ErrorObject struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail describes the failure: the first line of the error, the exit
// status, and the rest of the message (what to do about it), if any.
type ErrorDetail struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
	Hint    string `json:"hint"`
}

// NewErrorObject splits err's text into message and hint at its first
// line break, as opm's errors put the advice on the following lines.
func NewErrorObject(err error, code int) ErrorObject {
	msg, hint, _ := strings.Cut(err.Error(), "\n")
	return ErrorObject{Error: ErrorDetail{Message: strings.TrimSpace(msg), Code: code, Hint: strings.TrimSpace(hint)}}
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// nonNil is a copy of v with every nil slice and map made empty. Byte
// slices (base64 strings, raw JSON) are kept as they are.
func nonNil(v reflect.Value) reflect.Value {
	if !v.IsValid() {
		return v
	}
	t := v.Type()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(t.Elem())
		n.Elem().Set(nonNil(v.Elem()))
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(t).Elem()
		n.Set(nonNil(v.Elem()))
		return n
	case reflect.Struct:
		n := reflect.New(t).Elem()
		n.Set(v)
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				n.Field(i).Set(nonNil(v.Field(i)))
			}
		}
		return n
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 || t == rawMessageType {
			return v
		}
		n := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(nonNil(v.Index(i)))
		}
		return n
	case reflect.Array:
		n := reflect.New(t).Elem()
		for i := range v.Len() {
			n.Index(i).Set(nonNil(v.Index(i)))
		}
		return n
	case reflect.Map:
		n := reflect.MakeMapWithSize(t, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			n.SetMapIndex(iter.Key(), nonNil(iter.Value()))
		}
		return n
	}
	return v
}

// Progress is a progress line on stderr for a command writing format: nil
// (which shows nothing) unless the output is text. On a terminal it is
// one line redrawn in place; elsewhere (a CI log) plain lines, at most
// one every s.ProgressEvery, with no control sequences.
func Progress(s *iostreams.IOStreams, format, verb string, total int) *iostreams.Progress {
	if format != Text {
		return nil
	}
	if !s.ErrTTY {
		every := s.ProgressEvery
		if every <= 0 {
			every = iostreams.DefaultPlainEvery
		}
		return iostreams.NewPlainProgress(s.ErrOut, verb, total, every, nil)
	}
	return iostreams.NewProgress(s.ErrOut, verb, total)
}
