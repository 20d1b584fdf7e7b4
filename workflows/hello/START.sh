#!/bin/bash
# The entry state: greet whoever --input names, then hand over to COUNT.
name=${RAYMOND_INPUT:-world}
echo "<print>hello, $name</print>"
echo "<goto input=\"3\">COUNT</goto>"
