"""Short paragraphs that several test modules share, written for this project (facts only, our own wording)."""

from __future__ import annotations

SUPER_BOWL_TEXT = (
    "Super Bowl 50 settled which team was the best of the National Football League (NFL) in its 2015 season. "
    "Winners of the American Football Conference (AFC), the Denver Broncos defeated the Carolina Panthers, who had "
    "won the National Football Conference (NFC), 24-10 and so won the Super Bowl for the third time. "
    "The game was played at Levi's Stadium in Santa Clara, California, in the San Francisco Bay Area, on "
    "February 7, 2016."
)
WARSAW_TEXT = (
    "Warsaw, the capital of Poland, is also the country's biggest city. In east-central Poland, the city stands on "
    "the Vistula River. Official estimates put its population at 1.740 million residents."
)
