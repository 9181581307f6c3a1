"""Generic out-of-scope lines, trained as the ``none`` class of every intent head by default.

A pack lists only what its intents look like; without some idea of "anything else" a softmax must
spread all its mass over the intents, and unrelated text would be pushed onto one of them. These
lines are deliberately far from customer service: chit-chat, trivia, noise. Out-of-scope lines
from the deployment itself (label ``oos``) teach the near misses that these cannot.
"""

from __future__ import annotations

GENERIC_NONE: tuple[str, ...] = (
    "what's the weather like today",
    "tell me a joke",
    "who won the football game last night",
    "how tall is mount everest",
    "what is the capital of australia",
    "sing me a song",
    "do you like pizza",
    "what is the meaning of life",
    "recommend a good movie",
    "how do I bake sourdough bread",
    "what time is it in tokyo",
    "the cat is sleeping on the sofa",
    "asdfghjkl",
    "lol",
    "hmm",
    "ok",
    "blue green red yellow",
    "how many legs does a spider have",
    "translate hello into french",
    "what's your favourite colour",
    "are you a robot",
    "play some music",
    "set an alarm for 7am",
    "how far is the moon",
    "I went hiking in the mountains last weekend",
    "my dog ate my homework",
    "write me a poem about the sea",
    "who is the president of france",
    "what should I cook for dinner tonight",
    "how do volcanoes form",
    "the quick brown fox jumps over the lazy dog",
    "is it going to rain tomorrow",
    "how do I learn to play guitar",
    "what's 17 times 23",
    "tell me a fun fact about octopuses",
    "best hiking trails near me",
    "how do you say thank you in japanese",
    "what year did the titanic sink",
    "I like turtles",
    "knock knock",
)
