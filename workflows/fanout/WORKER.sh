#!/bin/bash
# A worker: its fork attribute word= arrives as $word.
sleep 0.2
echo "$word has ${#word} letters" >"fanout-out/$RAYMOND_AGENT_ID.txt"
echo "<print>$RAYMOND_AGENT_ID finished $word</print>"
echo "<result>$word</result>"
