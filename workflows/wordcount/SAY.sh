#!/bin/bash
# Return what 1_START found to whoever called this workflow.
echo "<result>$RAYMOND_INPUT</result>"
