<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.34.4-Prizren" styleCategories="Symbology|Labeling">
  <renderer-v2 type="categorizedSymbol" attr="continent" symbollevels="0" enableorderby="0" forceraster="0" referencescale="-1">
    <categories>
      <category render="true" symbol="0" value="Africa" label="Africa" type="string" uuid="{6d1e2f0a-1}"/>
      <category render="true" symbol="1" value="Asia" label="Asia" type="string" uuid="{6d1e2f0a-2}"/>
      <category render="false" symbol="2" value="Europe" label="Europe" type="string" uuid="{6d1e2f0a-3}"/>
    </categories>
    <symbols>
      <symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0" frame_rate="10" is_animated="0">
        <layer class="SimpleFill" enabled="1" locked="0" pass="0" id="{a1}">
          <Option type="Map">
            <Option name="color" type="QString" value="102,194,165,255"/>
            <Option name="joinstyle" type="QString" value="bevel"/>
            <Option name="outline_color" type="QString" value="35,35,35,255"/>
            <Option name="outline_style" type="QString" value="solid"/>
            <Option name="outline_width" type="QString" value="0.26"/>
            <Option name="outline_width_unit" type="QString" value="MM"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="1" alpha="1" clip_to_extent="1" force_rhr="0" frame_rate="10" is_animated="0">
        <layer class="SimpleFill" enabled="1" locked="0" pass="0" id="{a2}">
          <Option type="Map">
            <Option name="color" type="QString" value="252,141,98,255"/>
            <Option name="outline_color" type="QString" value="35,35,35,255"/>
            <Option name="outline_width" type="QString" value="0.26"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="PointPatternFill" enabled="1" locked="0" pass="0" id="{a3}">
          <Option type="Map">
            <Option name="distance_x" type="QString" value="2"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="2" alpha="1" clip_to_extent="1" force_rhr="0" frame_rate="10" is_animated="0">
        <layer class="SimpleFill" enabled="1" locked="0" pass="0" id="{a4}">
          <Option type="Map">
            <Option name="color" type="QString" value="141,160,203,255"/>
            <Option name="outline_color" type="QString" value="35,35,35,255"/>
            <Option name="outline_width" type="QString" value="0.26"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
      </symbol>
    </symbols>
    <source-symbol>
      <symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0" frame_rate="10" is_animated="0">
        <layer class="SimpleFill" enabled="1" locked="0" pass="0" id="{a5}">
          <Option type="Map">
            <Option name="color" type="QString" value="229,182,54,255"/>
            <Option name="outline_color" type="QString" value="35,35,35,255"/>
            <Option name="outline_width" type="QString" value="0.26"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
      </symbol>
    </source-symbol>
    <colorramp type="randomcolors" name="[source]">
      <Option/>
    </colorramp>
    <rotation/>
    <sizescale/>
  </renderer-v2>
  <labeling type="simple">
    <settings calloutType="simple">
      <text-style fieldName="name" fontSize="8" fontSizeUnit="Point" textColor="50,50,50,255" isExpression="0" fontFamily="Open Sans"/>
      <text-format wrapChar="" autoWrapLength="0"/>
      <placement placement="1" dist="0"/>
    </settings>
  </labeling>
  <blendMode>0</blendMode>
</qgis>
