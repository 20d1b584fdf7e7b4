#!/bin/bash
# The entry state: hand the text to another workflow, wordcount/, whose
# <result> comes back to REPORT.  The path is relative to this folder,
# and input= is rendered, so {{input}} is this state's own input.
echo "<print>asking ../wordcount about: ${RAYMOND_INPUT:-nothing}</print>"
echo '<call-workflow return="REPORT" input="{{input}}">../wordcount</call-workflow>'
