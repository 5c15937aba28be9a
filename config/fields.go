package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkFields walks the YAML tree against the Go type of target and reports
// the first key the type does not have, with its path and the allowed keys:
// `regions[2]: unknown field "cronn" (line 9); allowed: code, cron, ...`.
// yaml.v3's KnownFields only says "field cronn not found in type
// config.Region", which tells a user neither where nor what to write instead.
func checkFields(root *yaml.Node, target any) error {
	if size := expandedSize(root, map[*yaml.Node]int{}); size > maxExpandedNodes {
		return fmt.Errorf("too many aliases: the file would expand to over %d nodes (at most %d); "+
			"write the values out, or use fewer aliases", size, maxExpandedNodes)
	}
	n := root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	return walk(n, reflect.TypeOf(target), "")
}

func walk(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return fmt.Errorf("%s (line %d): want a mapping of %s", orTop(path), n.Line, strings.Join(yamlFields(t), ", "))
		}
		fields := yamlFieldTypes(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("%s: unknown field %q (line %d); allowed: %s", orTop(path), k.Value, k.Line, strings.Join(yamlFields(t), ", "))
			}
			if err := walk(v, ft, join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if n.Tag == "!!null" {
				return nil
			}
			return fmt.Errorf("%s (line %d): want a list", orTop(path), n.Line)
		}
		for i, item := range n.Content {
			if err := walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return fmt.Errorf("%s (line %d): want a mapping such as {videos.list: 1}", orTop(path), n.Line)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := walk(n.Content[i+1], t.Elem(), fmt.Sprintf("%s[%q]", path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

func orTop(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func yamlFieldTypes(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		m[name] = f.Type
	}
	return m
}

func yamlFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

// maxExpandedNodes bounds a file with its aliases expanded. A real
// schedule.yaml has a few hundred nodes; a "billion laughs" file of 60 KB
// expands to millions, and walking them took minutes before yaml.v3's own
// alias limit (which applies only when decoding) was reached.
const maxExpandedNodes = 100_000

// expandedSize counts n's nodes with every alias expanded, in time linear
// in the file (each anchor's size is computed once), and stops counting past
// the limit.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.AliasNode {
		return expandedSize(n.Alias, memo)
	}
	if v, ok := memo[n]; ok {
		return v
	}
	memo[n] = maxExpandedNodes + 1 // a cycle counts as too many
	size := 1
	for _, c := range n.Content {
		size += expandedSize(c, memo)
		if size > maxExpandedNodes {
			break
		}
	}
	memo[n] = size
	return size
}
